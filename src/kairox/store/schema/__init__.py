"""Per-area schema migrations; ``kairox.store.migrations`` orders them."""
