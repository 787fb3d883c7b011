"""Foundation: ids, clock, errors, typed events and config models; imports nothing above it."""
