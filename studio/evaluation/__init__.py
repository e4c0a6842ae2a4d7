"""What did the model learn? Scoring and generation (evaluate), metrics, UI/CLI services (inference), export."""
