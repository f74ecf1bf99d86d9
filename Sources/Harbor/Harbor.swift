// Harbor — the umbrella module: `import Harbor` brings in every public layer.
@_exported import HarborPorts
@_exported import HarborTransport
@_exported import HarborRunLoop
@_exported import HarborSystemd
