// Harbor — Apple's Swift XPC sample ("Creating XPC services", XPC framework
// documentation: a service that adds two numbers, and its client), written
// from its description with only the import changed, as Docs/Porting.md
// shows it; run by SnippetTests against a name server in the process.
// snippet: porting-apple-xpc-sample
import HarborXPC                                   // Darwin: import XPC

struct CalculationRequest: Codable {
    let firstNumber: Int
    let secondNumber: Int
}

struct CalculationResponse: Codable {
    let result: Int
}

func performCalculation(with message: XPCReceivedMessage) -> Encodable? {
    do {
        let request = try message.decode(as: CalculationRequest.self)
        return CalculationResponse(result: request.firstNumber + request.secondNumber)
    } catch {
        print("Failed to decode received message, error: \(error)")
        return nil
    }
}
// end snippet

extension Snippets {
    static func appleXPCSample(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: porting-apple-xpc-sample

        // The service: a listener that accepts every session.
        let listener = try XPCListener(service: "com.example.calculator") { request in
            request.accept { message in
                performCalculation(with: message)
            }
        }

        // The client: a session, a request, its reply.
        let session = try XPCSession(machService: "com.example.calculator")
        let request = CalculationRequest(firstNumber: 23, secondNumber: 19)
        let reply = try session.sendSync(request)
        let response = try reply.decode(as: CalculationResponse.self)
        print("Received response with result: \(response.result)")
        // end snippet
        _ = listener
    }
}
