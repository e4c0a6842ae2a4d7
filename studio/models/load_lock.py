"""The process-wide lock every model load takes (its own module so that loading and gguf_import share it without
importing each other)."""
from __future__ import annotations

import threading

# One from_pretrained at a time in this process: while transformers loads a model it swaps module-global
# functions (torch's init functions, PreTrainedModel.tie_weights) and restores what it saw, so two loads that
# overlap in threads restore each other's stand-ins. Reentrant: a load may nest a load.
LOAD_LOCK = threading.RLock()
