"""The run configuration: RunConfig and its fields (run_config), the checks (checks), YAML reading
(yaml_io), LLaMA-Factory key names (lf_keys). Bottom layer: imports nothing above it."""
