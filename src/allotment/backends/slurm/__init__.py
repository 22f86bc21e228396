"""Slurm backend: drives a real Slurm with sacctmgr, squeue, sinfo, sshare and scontrol."""
