"""Where a plan's or a sweep's independent simulations run (docs/plan.md, "Executors").

One interface (``protocol.Executor``), a plain reference (``local.LocalPool``: this machine's
processes, the default) and a Slurm job array (``slurm.SlurmArray``).  Every task is
deterministic and named by its content-addressed key, so no executor can change a result."""
