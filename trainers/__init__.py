"""rewardhub for trainers: TRL GRPO/RLOO wiring (``grpo``, ``by_name``, ``from_config``), PPO loops
(``ppo``, ``ppo_loop``), the HTTP reward server (``server``), OpenRLHF/verl shims (``openrlhf``,
``verl``, ``shims``, ``client``), group assembly for one-sample callers (``groups``) and abstentions in
framework logs (``abstentions``). Nothing is imported here: each module loads its heavy dependencies
only when used."""

__all__ = []
