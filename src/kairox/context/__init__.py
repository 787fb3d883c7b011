"""Context: tokenizers, model windows, the ContextAssembler, its trace and replay."""
