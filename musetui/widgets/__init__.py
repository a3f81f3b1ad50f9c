"""The widgets of the musetui app, one module per feature."""
