"""The reward-hacking monitor: signals read from what a reward set scored over training steps.

Used by TRL (:class:`rewardhub.trainers.hacking.HackingCallback`), the reward server and the framework
shims (over windows of steps), and ``rewardhub report`` (over scored files of successive steps).
"""

from .monitor import PREFIX, Alarm, HackingMonitor, RewardHackingWarning, role_of
from .persist import MonitorStateError
from .settings import ROLES, SIGNALS, MonitorSettings

__all__ = ["PREFIX", "ROLES", "SIGNALS", "Alarm", "HackingMonitor", "MonitorSettings", "MonitorStateError",
           "RewardHackingWarning", "role_of"]
