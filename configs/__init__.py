"""raychunk's default configs, shipped inside the package as ``raychunk.configs``."""
