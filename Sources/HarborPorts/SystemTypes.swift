// Harbor — the two system types HarborPorts' public API shows (a message's
// sender, an error's cause), visible to whoever imports HarborPorts.
@_exported import struct HarborSystem.ProcessIdentity
@_exported import struct HarborSystem.SystemError
