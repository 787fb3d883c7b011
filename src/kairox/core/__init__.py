"""Foundation: ids, clock, errors, typed events and config models. Imports nothing else in kairox."""
