"""Fine-Tune Studio: point-and-click fine-tuning of language models on one card."""
__version__ = "0.1.0"
