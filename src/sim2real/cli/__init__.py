"""Command-line interface: one typer module per verb group, each a thin shell over the library."""
