"""``python -m studio VERB``: one module per verb (convert, train, evaluate, export, estimate); main dispatches."""
