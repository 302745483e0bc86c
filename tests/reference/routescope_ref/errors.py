"""The reference's two error kinds; each message names what failed and where (key, dataset)."""


class ConfigError(ValueError):
    """A run configuration that docs/config.md does not allow (message names the key)."""


class CheckpointError(ValueError):
    """A checkpoint that CHECKPOINT_FORMAT.md version 1 does not allow (message names the dataset)."""
