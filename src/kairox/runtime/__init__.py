"""Runtime: the session actor, a command's setup, the turn loop and when to compact."""
