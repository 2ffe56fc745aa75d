"""rewardhub for trainers: TRL GRPO/RLOO wiring (``grpo``, ``by_name``, ``from_config``), PPO loops
(``ppo``, ``ppo_loop``), the HTTP reward server (``server``) and OpenRLHF/verl shims (``openrlhf``,
``verl``). Nothing is imported here: each module loads its heavy dependencies only when used."""
