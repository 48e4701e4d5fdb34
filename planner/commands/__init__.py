"""One module per command (or pair of commands); each is a thin shell over the library."""
