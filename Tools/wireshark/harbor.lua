-- Harbor — a Wireshark / tshark dissector for Harbor capture records
-- (Docs/Capture.md): the packets of a pcapng file `harbor capture` or
-- HarborCapture's PcapngWriter wrote, link type LINKTYPE_USER0 (147).
--
-- Use:  tshark -X lua_script:Tools/wireshark/harbor.lua -r FILE -V
--       tshark -X lua_script:Tools/wireshark/harbor.lua -r FILE -T fields -e harbor.id -e harbor.sender_pid
-- or copy this file to ~/.local/lib/wireshark/plugins/.
--
-- Every length is checked against the packet before it is read, so a
-- damaged record shows an expert note, never a Lua error ("Malformed").

local harbor = Proto("harbor", "Harbor port capture record")

local directions = { [0] = "admitted" }
local replies = { [0] = "none", [1] = "send", [2] = "send-once", [3] = "receive" }

-- The message ids of the formats Harbor defines (their code in parentheses).
local ids = {
    [0x48420001] = "bootstrap look-up",         -- BootstrapRequest.lookUp (HarborBootstrap)
    [0x48420002] = "bootstrap check-in",
    [0x48420003] = "bootstrap register",
    [0x48420004] = "bootstrap unregister",
    [0x48420005] = "bootstrap list",
    [0x48420006] = "bootstrap gone",
    [0x50494E47] = "ping",                      -- bootstrapPingID
    [0x58504301] = "XPC connect",               -- XPCWire (HarborXPC)
    [0x58504302] = "XPC accepted",
    [0x58504303] = "XPC rejected",
    [0x58504304] = "XPC message",
    [0x58504305] = "XPC request",
    [0x58504306] = "XPC reply",
    [0x58504307] = "XPC failure",
    [0x58504308] = "XPC cancel",
    [0x58504309] = "XPC subscribe",
    [0x5850430A] = "XPC event",
    [0x5850430B] = "XPC stream end",
    [0x5850430C] = "XPC introspect",
    [0x5850430D] = "XPC interface",
    [0x5850430E] = "XPC call",
    [0x585043FF] = "XPC wake",
    [0x48414301] = "actor invocation",          -- ActorWire (HarborDistributed)
    [0x48414302] = "actor returned",
    [0x48414303] = "actor returned (void)",
    [0x48414304] = "actor threw",
    [0x48414305] = "actor call failed",
}
-- Bootstrap requests whose body is a service name.
local named = { [0x48420001] = true, [0x48420002] = true, [0x48420003] = true,
                [0x48420004] = true, [0x48420006] = true }
-- HarborCoding's tags (MessageCodingFormat.Tag).
local tags = { [0x00] = "null", [0x01] = "false", [0x02] = "true", [0x03] = "signed", [0x04] = "unsigned",
               [0x05] = "float", [0x06] = "double", [0x07] = "string", [0x08] = "bytes", [0x09] = "array",
               [0x0A] = "keyed", [0x0B] = "send right", [0x0C] = "send-once right", [0x0D] = "receive right",
               [0x0E] = "region", [0x0F] = "file" }

local f = harbor.fields
f.version        = ProtoField.uint8("harbor.version", "Record version")
f.direction      = ProtoField.uint8("harbor.direction", "Direction", base.DEC, directions)
f.flags          = ProtoField.uint16("harbor.flags", "Flags", base.HEX)
f.notification   = ProtoField.bool("harbor.flags.notification", "Notification", 16, nil, 0x0001)
f.counted        = ProtoField.bool("harbor.flags.counted", "Counts against the queue limit", 16, nil, 0x0002)
f.relayed        = ProtoField.bool("harbor.flags.relayed", "Relayed", 16, nil, 0x0004)
f.truncated      = ProtoField.bool("harbor.flags.truncated", "Body truncated", 16, nil, 0x0008)
f.header_length  = ProtoField.uint16("harbor.header_length", "Header length")
f.regions_listed = ProtoField.uint16("harbor.regions_listed", "Region sizes listed")
f.port           = ProtoField.uint64("harbor.port", "Port")
f.index          = ProtoField.uint64("harbor.index", "Admission number")
f.monotonic      = ProtoField.uint64("harbor.monotonic_ns", "Monotonic time (ns)")
f.id             = ProtoField.int32("harbor.id", "Message id")
f.id_hex         = ProtoField.uint32("harbor.id_hex", "Message id (hex)", base.HEX)
f.kind           = ProtoField.string("harbor.kind", "Message kind")
f.size           = ProtoField.uint32("harbor.size", "Body size")
f.prefix_length  = ProtoField.uint32("harbor.prefix_length", "Body bytes recorded")
f.queue_depth    = ProtoField.uint32("harbor.queue_depth", "Queue depth after admission")
f.sender_pid     = ProtoField.int32("harbor.sender_pid", "Sender pid")
f.sender_uid     = ProtoField.uint32("harbor.sender_uid", "Sender uid")
f.sender_gid     = ProtoField.uint32("harbor.sender_gid", "Sender gid")
f.relay_pid      = ProtoField.int32("harbor.relay_pid", "Relay pid")
f.relay_uid      = ProtoField.uint32("harbor.relay_uid", "Relay uid")
f.relay_gid      = ProtoField.uint32("harbor.relay_gid", "Relay gid")
f.claimed_pid    = ProtoField.int32("harbor.claimed_pid", "Claimed original sender pid")
f.claimed_uid    = ProtoField.uint32("harbor.claimed_uid", "Claimed original sender uid")
f.claimed_gid    = ProtoField.uint32("harbor.claimed_gid", "Claimed original sender gid")
f.send_rights    = ProtoField.uint16("harbor.rights.send", "Send rights")
f.send_once      = ProtoField.uint16("harbor.rights.send_once", "Send-once rights")
f.receive_rights = ProtoField.uint16("harbor.rights.receive", "Receive rights")
f.reply          = ProtoField.uint8("harbor.reply", "Reply right", base.DEC, replies)
f.files          = ProtoField.uint16("harbor.files", "File descriptors")
f.regions        = ProtoField.uint16("harbor.regions", "Out-of-line regions")
f.region_bytes   = ProtoField.uint64("harbor.region_bytes", "Out-of-line bytes")
f.dropped        = ProtoField.uint64("harbor.dropped_before", "Records dropped before this one")
f.region_size    = ProtoField.uint64("harbor.region_size", "Region size")
f.body           = ProtoField.bytes("harbor.body", "Body (recorded bytes)")
f.text           = ProtoField.string("harbor.text", "Body as text")
f.bootstrap_name = ProtoField.string("harbor.bootstrap.name", "Service name")
f.coding_version = ProtoField.uint8("harbor.coding.version", "HarborCoding version")
f.coding_tag     = ProtoField.uint8("harbor.coding.tag", "HarborCoding value", base.HEX, tags)

local e_short = ProtoExpert.new("harbor.short", "Record shorter than its header",
                                expert.group.MALFORMED, expert.severity.ERROR)
local e_version = ProtoExpert.new("harbor.unknown_version", "Record version this dissector does not read",
                                  expert.group.PROTOCOL, expert.severity.WARN)
local e_lengths = ProtoExpert.new("harbor.lengths", "Record lengths do not add up to the packet",
                                  expert.group.MALFORMED, expert.severity.ERROR)
local e_dropped = ProtoExpert.new("harbor.dropped", "Records were dropped before this one (the reader was too slow)",
                                  expert.group.SEQUENCE, expert.severity.WARN)
harbor.experts = { e_short, e_version, e_lengths, e_dropped }

local HEADER = 112

-- Whether every byte of the Lua string is printable ASCII (or tab, newline).
local function printable(raw)
    for i = 1, #raw do
        local b = raw:byte(i)
        if not ((b >= 0x20 and b < 0x7F) or b == 0x09 or b == 0x0A or b == 0x0D) then return false end
    end
    return true
end

-- Bootstrap names: 1–128 bytes of A–Z a–z 0–9 . _ - : @
local function is_name(raw)
    if #raw < 1 or #raw > 128 then return false end
    return raw:find("^[A-Za-z0-9._:@-]+$") ~= nil
end

-- The recorded body (a TvbRange): its bytes, and what Harbor's own formats
-- say of it. Returns a summary for the Info column, or nil.
local function dissect_body(body, id, size, tree)
    tree:add(f.body, body)
    local raw = body:raw()
    if named[id] and body:len() == size and is_name(raw) then
        tree:add(f.bootstrap_name, body)
        return raw
    end
    local tag = body:len() >= 2 and tags[raw:byte(2)] or nil
    if raw:byte(1) == 1 and tag ~= nil and not printable(raw) then
        local coded = tree:add(body, "HarborCoding body: " .. tag)
        coded:add(f.coding_version, body:range(0, 1))
        coded:add(f.coding_tag, body:range(1, 1))
        return "coded " .. tag
    end
    if printable(raw) then
        tree:add(f.text, body)
        return '"' .. raw .. '"'
    end
    return nil
end

function harbor.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "Harbor"
    local length = tvb:len()
    local root = tree:add(harbor, tvb(), "Harbor capture record")
    if length < 8 then
        root:add_proto_expert_info(e_short)
        return length
    end
    root:add(f.version, tvb(0, 1))
    local version = tvb(0, 1):uint()
    if version ~= 1 then
        root:add_proto_expert_info(e_version)
        pinfo.cols.info = "Harbor record version " .. version
        return length
    end
    if length < HEADER then
        root:add_proto_expert_info(e_short)
        return length
    end
    root:add(f.direction, tvb(1, 1))
    local flags = root:add_le(f.flags, tvb(2, 2))
    flags:add_le(f.notification, tvb(2, 2))
    flags:add_le(f.counted, tvb(2, 2))
    flags:add_le(f.relayed, tvb(2, 2))
    flags:add_le(f.truncated, tvb(2, 2))
    local header = tvb(4, 2):le_uint()
    local listed = tvb(6, 2):le_uint()
    local prefix = tvb(40, 4):le_uint()
    root:add_le(f.header_length, tvb(4, 2))
    root:add_le(f.regions_listed, tvb(6, 2))
    root:add_le(f.port, tvb(8, 8))
    root:add_le(f.index, tvb(16, 8))
    root:add_le(f.monotonic, tvb(24, 8))
    local id = tvb(32, 4):le_int()
    root:add_le(f.id, tvb(32, 4))
    root:add_le(f.id_hex, tvb(32, 4))
    local kind = ids[tvb(32, 4):le_uint()]
    if kind then root:add(f.kind, tvb(32, 4), kind) end
    local size = tvb(36, 4):le_uint()
    root:add_le(f.size, tvb(36, 4))
    root:add_le(f.prefix_length, tvb(40, 4))
    root:add_le(f.queue_depth, tvb(44, 4))
    local sender = root:add(tvb(48, 12),
        "Sender (kernel-verified): pid " .. tvb(48, 4):le_int() .. " uid " .. tvb(52, 4):le_uint()
                    .. " gid " .. tvb(56, 4):le_uint())
    sender:add_le(f.sender_pid, tvb(48, 4))
    sender:add_le(f.sender_uid, tvb(52, 4))
    sender:add_le(f.sender_gid, tvb(56, 4))
    if bit.band(tvb(2, 2):le_uint(), 0x0004) ~= 0 then
        local relay = root:add(tvb(60, 24),
            "Relayed by pid " .. tvb(60, 4):le_int() .. ", which says pid " .. tvb(72, 4):le_int()
                       .. " sent it")
        relay:add_le(f.relay_pid, tvb(60, 4))
        relay:add_le(f.relay_uid, tvb(64, 4))
        relay:add_le(f.relay_gid, tvb(68, 4))
        relay:add_le(f.claimed_pid, tvb(72, 4))
        relay:add_le(f.claimed_uid, tvb(76, 4))
        relay:add_le(f.claimed_gid, tvb(80, 4))
    end
    root:add_le(f.send_rights, tvb(84, 2))
    root:add_le(f.send_once, tvb(86, 2))
    root:add_le(f.receive_rights, tvb(88, 2))
    root:add(f.reply, tvb(90, 1))
    root:add_le(f.files, tvb(92, 2))
    root:add_le(f.regions, tvb(94, 2))
    root:add_le(f.region_bytes, tvb(96, 8))
    local dropped = root:add_le(f.dropped, tvb(104, 8))
    if tvb(104, 8):le_uint64() ~= UInt64(0) then dropped:add_proto_expert_info(e_dropped) end

    local info = string.format("id %d", id)
    if kind then info = string.format("%s (id 0x%08X)", kind, tvb(32, 4):le_uint()) end
    info = info .. string.format(", %d bytes, from pid %d, depth %d", size, tvb(48, 4):le_int(), tvb(44, 4):le_uint())

    if header < HEADER or header + 8 * listed + prefix ~= length then
        root:add_proto_expert_info(e_lengths)
        pinfo.cols.info = info
        return length
    end
    for i = 0, listed - 1 do root:add_le(f.region_size, tvb(header + 8 * i, 8)) end
    if prefix > 0 then
        local said = dissect_body(tvb(header + 8 * listed, prefix), id, size, root)
        if said then info = info .. ": " .. said end
    end
    pinfo.cols.info = info
    return length
end

local encap = (wtap_encaps and wtap_encaps.USER0) or wtap.USER0
DissectorTable.get("wtap_encap"):add(encap, harbor)
