"""The JavaScript driver: appended to the solution's script, it calls ``FN`` (a function of the script, else
a method of ``new Solution()``, else ``module.exports.FN``) with the JSON arguments on stdin, awaits a
promise, and prints the value as JSON on the last line of stdout."""

from __future__ import annotations

__all__ = ["javascript_program"]

DRIVER = """
;(async () => {
  const rewardhubArgs = JSON.parse(require("fs").readFileSync(0, "utf8"));
  let rewardhubFn;
  if (typeof __NAME__ === "function") rewardhubFn = __NAME__;
  else if (typeof Solution === "function") { const s = new Solution(); rewardhubFn = s.__NAME__.bind(s); }
  else rewardhubFn = module.exports.__NAME__ || module.exports;
  let value = rewardhubFn(...rewardhubArgs);
  if (value && typeof value.then === "function") value = await value;
  const text = JSON.stringify(value === undefined ? null : value);
  require("fs").writeSync(1, "\\n" + text + "\\n");
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


def javascript_program(code: str, fn_name: str) -> str:
    return code + "\n" + DRIVER.replace("__NAME__", fn_name)
