"""The screens of the musetui app: main, help, search, provider filter."""
