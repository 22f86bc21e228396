"""``allot replay``: a trace replayed as real jobs on a real backend, with the reconciler in
active mode alongside, and what really happened written in the simulator's event-log format, so
the simulator's prediction can be checked against the cluster (docs/fidelity.md).

* ``submit``: each trace job becomes one ``sbatch`` (QOS from its minimum-runtime tier, GPUs and
  nodes from its shape, a time limit from its work) running a requeue-safe script that resumes
  from its last checkpoint;
* ``drive``: submits at the (compressed) trace times, applies node health events through the
  reconciler's health file, runs the reconciler's loop in a thread, waits for the queue to empty;
* ``collect``: ``sacct -D`` (every run of every job, requeued ones included) and the
  reconciler's audit log become the event log;
* ``events``: the event-log records and the metrics, computed by the simulator's ``Recorder``.
"""
