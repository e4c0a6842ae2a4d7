"""Models: loading (local folder, hub id, packaged GGUF, tiny-demo), the built-in zoo, GGUF import
and the precision plan."""
