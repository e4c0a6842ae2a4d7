"""The single-card training engine: ``run_training(cfg, resume_from=None)``."""
from .run import run_training

__all__ = ["run_training"]
