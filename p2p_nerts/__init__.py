"""p2p-nerts: Nerts on a local network with no server."""

__version__ = "0.1.0"
