"""Will it fit? The memory estimator (estimator), architecture cards (cards) and fixes (advice)."""
