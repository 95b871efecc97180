"""raychunk: structure-first document chunking on Ray, and the price of an index before you build it."""

__version__ = "0.1.0"
