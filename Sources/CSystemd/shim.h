// Harbor — the parts of libsystemd Harbor uses (found through pkg-config).
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>
