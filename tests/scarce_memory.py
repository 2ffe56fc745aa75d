"""A worker warm-up that only ``$SCARCE_MEMORY_SLOTS`` workers at a time survive: each holds a lock on one
slot file in ``$SCARCE_MEMORY_DIR``, and a worker that finds none free is SIGKILLed at start-up, as a
memory limit that fits only that many workers has the OOM killer do. Imported in workers by name."""

import fcntl
import os
import signal

_held = []


def claim_a_slot() -> None:
    folder, slots = os.environ["SCARCE_MEMORY_DIR"], int(os.environ["SCARCE_MEMORY_SLOTS"])
    for slot in range(slots):
        f = open(os.path.join(folder, f"slot-{slot}"), "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        _held.append(f)  # held until this worker dies: its slot is then free again
        return
    os.kill(os.getpid(), signal.SIGKILL)
