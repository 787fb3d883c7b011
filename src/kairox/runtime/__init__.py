"""Runtime: model providers, profiles and config, the session actor and the turn loop."""
