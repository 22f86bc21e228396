"""Views that make the scheduler legible: ``allot explain``, ``status``, ``usage``, ``report``,
``serve``.  They only read what the simulator saved (``rundir``) or what the reconciler keeps in
its state dir (``livestate``); nothing here decides or re-runs anything."""
