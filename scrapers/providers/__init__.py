"""One module (or pair) per provider; each is found through ``vocab.PROVIDER_TABLE``."""
