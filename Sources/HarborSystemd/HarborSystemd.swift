// Harbor — systemd integration. (Being built: see Docs/Systemd.md.)
