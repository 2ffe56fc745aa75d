"""Plugin loading: a real pip-installed entry-point plugin, the allow-list, duplicate names, hooks."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from paths import ROOT

import rewardhub
from rewardhub import DuplicateRewardError

RH = str(Path(sys.executable).with_name("rewardhub"))


def pip_install_target(source: Path, target: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target),
         str(source)],
        check=True, capture_output=True,
    )


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """The example plugin distribution, really pip-installed into its own site directory."""
    target = tmp_path_factory.mktemp("site")
    pip_install_target(ROOT / "examples" / "plugin-politeness", target)
    return target


def run_cli(*args, site=None, env_extra=None, cwd=None):
    env = {k: v for k, v in os.environ.items() if k != "REWARDHUB_LOAD_PLUGINS"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    env.update(env_extra or {})
    return subprocess.run([RH, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_installed_plugin_is_listed_with_its_distribution(plugin_site):
    result = run_cli("list", "--json", site=plugin_site)
    assert result.returncode == 0, result.stderr
    rewards = {r["name"]: r for r in json.loads(result.stdout)}
    assert rewards["politeness"]["source"] == "rewardhub-politeness"
    assert rewards["politeness"]["params"]["per_phrase"]["default"] == 0.5


def test_installed_plugin_is_usable_from_a_config(plugin_site, tmp_path):
    config = tmp_path / "rewards.yaml"
    config.write_text("rewards:\n  - name: politeness\n    params: {per_phrase: 1.0}\n")
    data = tmp_path / "in.jsonl"
    data.write_text('{"prompt": "hi", "completion": "Thanks, please do"}\n{"prompt": "hi", "completion": "no"}\n')
    result = run_cli("score", "--config", str(config), str(data), "-q", site=plugin_site)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["rewards"]["politeness"] for r in rows] == [1.0, 0.0]
    assert rows[0]["reasons"]["politeness"] == "polite phrases: please, thanks"


def test_allow_list_restricts_third_party_plugins(plugin_site):
    names = lambda env: {r["name"] for r in json.loads(run_cli("list", "--json", site=plugin_site, env_extra=env).stdout)}  # noqa: E731
    assert "politeness" not in names({"REWARDHUB_LOAD_PLUGINS": ""})
    assert "politeness" in names({"REWARDHUB_LOAD_PLUGINS": "rewardhub_politeness"})
    assert "politeness" not in names({"REWARDHUB_LOAD_PLUGINS": "some-other-plugin"})


def test_two_distributions_with_one_name_is_an_error_naming_both(plugin_site, tmp_path):
    clash = tmp_path / "clash"
    clash.mkdir()
    (clash / "pyproject.toml").write_text(textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "rewardhub-clash"
        version = "0.1.0"
        [project.entry-points.rewardhub]
        clash = "rewardhub_clash"
        [tool.setuptools]
        py-modules = ["rewardhub_clash"]
    """))
    (clash / "rewardhub_clash.py").write_text(textwrap.dedent("""
        import rewardhub

        @rewardhub.sample_reward(name="politeness")
        def impolite(text):
            return 0.0

        @rewardhub.hookimpl
        def register_rewards(register):
            register(impolite)
    """))
    pip_install_target(clash, plugin_site)
    try:
        result = run_cli("list", site=plugin_site)
        assert result.returncode == 2
        assert "'politeness' is registered twice" in result.stderr
        assert "rewardhub-politeness" in result.stderr and "rewardhub-clash" in result.stderr
    finally:
        for path in plugin_site.glob("rewardhub_clash*"):
            subprocess.run(["rm", "-rf", str(path)], check=True)


def test_duplicate_registration_in_process(clean_registry):
    @rewardhub.sample_reward(name="dup_name")
    def first(text):
        return 1.0

    @rewardhub.sample_reward(name="dup_name")
    def second(text):
        return 0.0

    clean_registry.add(first, source="dist-a")
    with pytest.raises(DuplicateRewardError, match="by 'dist-a' and by 'dist-b'"):
        clean_registry.add(second, source="dist-b")


def test_plugins_listing_shows_hooks(plugin_site):
    result = run_cli("list", "--plugins", "--json", site=plugin_site)
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["politeness"]["hooks"] == ["register_rewards"]
    assert plugins["politeness"]["source"] == "rewardhub-politeness"
    assert "register_commands" in plugins["rewardhub.cli"]["hooks"]


def test_import_rewardhub_is_light():
    code = "import sys, rewardhub; heavy = {'torch', 'sympy', 'openai', 'transformers', 'docker', 'matplotlib'}; print(sorted(heavy & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_loading_every_builtin_plugin_stays_light():
    code = ("import sys, rewardhub; rewardhub.list_rewards(); "
            "heavy = {'torch', 'sympy', 'openai', 'transformers', 'docker', 'matplotlib', 'starlette'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_wheel_maps_the_top_level_folders_into_one_package(tmp_path):
    """DESIGN's layout (plugins/, rewards/, sandbox/, trainers/ -> rewardhub.*) must hold in a wheel too."""
    # Built from the tracked files alone, in a copy: a stale build/ folder in the tree must not hide a missing file.
    source = tmp_path / "source"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (t.decode() for t in tracked)):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path / "dist"), str(source)], check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("rewardhub-*.whl"))
    pip_install_target(wheel, tmp_path / "site")
    # Every package folder of the source tree must be in the wheel (setuptools lists them by hand).
    packages = sorted(_package_name(init) for top in TOP_FOLDERS for init in (ROOT / top).rglob("__init__.py"))
    code = (
        "import importlib, rewardhub, importlib.resources as r; "
        f"[importlib.import_module(p) for p in {packages!r}]; "
        "print(rewardhub.__file__); "
        "print(r.files('rewardhub.rewards.judge').joinpath('templates/pointwise.txt').is_file()); "
        "print(len(rewardhub.list_rewards()) >= 10)"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.split()
    assert out[0].startswith(str(tmp_path / "site" / "rewardhub"))
    assert out[1:] == ["True", "True"]
    assert not list((tmp_path / "site").glob("plugins")) and not list((tmp_path / "site").glob("rewards"))


TOP_FOLDERS = ("plugins", "rewards", "sandbox", "trainers")


def _package_name(init: Path) -> str:
    """plugins/report/__init__.py -> rewardhub.report; rewards/math/__init__.py -> rewardhub.rewards.math."""
    top, *rest = init.parent.relative_to(ROOT).parts
    return ".".join(["rewardhub", *([] if top == "plugins" else [top]), *rest])


def fake_distribution(site: Path, name: str, entry_point: str, module: str, source: str) -> None:
    """A distribution as an installer leaves it: a module plus its .dist-info with one entry point."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[rewardhub]\n{entry_point} = {module}\n")
    (site / f"{module}.py").write_text(textwrap.dedent(source))


def test_two_distributions_may_use_the_same_entry_point_name(plugin_site, tmp_path):
    fake_distribution(tmp_path, "rewardhub-samename", "politeness", "rewardhub_samename", """
        import rewardhub

        class Other(rewardhub.Reward):
            name = "other_reward"

            def score_sample(self, text, row):
                return 1.0

        @rewardhub.hookimpl
        def register_rewards(register):
            register(Other)
    """)
    result = run_cli("list", "--json", env_extra={"PYTHONPATH": os.pathsep.join([str(plugin_site), str(tmp_path)])})
    assert result.returncode == 0, result.stderr
    sources = {r["name"]: r["source"] for r in json.loads(result.stdout)}
    assert sources["politeness"] == "rewardhub-politeness"  # was silently dropped: same entry-point name
    assert sources["other_reward"] == "rewardhub-samename"


def test_a_plugin_that_fails_to_import_is_named_with_the_way_out(tmp_path):
    fake_distribution(tmp_path, "rewardhub-broken", "broken", "rewardhub_broken", "import not_a_module_anywhere\n")
    result = run_cli("list", site=tmp_path)
    assert result.returncode == 2
    assert "plugin 'broken' of distribution 'rewardhub-broken' failed to load: ModuleNotFoundError" in result.stderr
    assert "REWARDHUB_LOAD_PLUGINS" in result.stderr and "Traceback" not in result.stderr
    assert run_cli("list", site=tmp_path, env_extra={"REWARDHUB_LOAD_PLUGINS": ""}).returncode == 0


def test_allow_list_names_are_compared_in_pep_503_form(plugin_site):
    result = run_cli("list", "--json", site=plugin_site, env_extra={"REWARDHUB_LOAD_PLUGINS": "RewardHub.Politeness"})
    assert "politeness" in {r["name"] for r in json.loads(result.stdout)}


def test_a_plugin_whose_register_rewards_fails_is_named(tmp_path):
    fake_distribution(tmp_path, "rewardhub-nameless", "nameless", "rewardhub_nameless", """
        import rewardhub

        @rewardhub.hookimpl
        def register_rewards(register):
            register(lambda text: 1.0)  # no registry name
    """)
    result = run_cli("list", site=tmp_path)
    assert result.returncode == 2
    assert "plugin 'nameless' (distribution 'rewardhub-nameless') failed in register_rewards: TypeError" in result.stderr
    assert "has no registry name" in result.stderr and "Traceback" not in result.stderr
