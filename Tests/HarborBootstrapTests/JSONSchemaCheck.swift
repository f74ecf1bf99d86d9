// Harbor — test support: the part of JSON Schema the CLI's schemas use (Docs/schemas), checked by hand.
import Foundation
import HarborTestSupport
import Testing

/// Checks a JSON value against a schema file of `Docs/schemas`: `type`
/// (one or a list), `enum`, `required`, `properties`,
/// `additionalProperties: false` and `items`, recursively. A keyword it
/// does not know is a problem, so a schema that grows past this checker
/// fails loudly rather than passing unchecked.
struct JSONSchemaCheck {
    let schema: [String: Any]
    let file: String

    /// The repository's `Docs/schemas/harbor-COMMAND.schema.json`.
    init(command: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        file = root.appendingPathComponent("Docs/schemas/harbor-\(command).schema.json").path
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CheckError(problem: "\(file): not a JSON object")
        }
        schema = object
    }

    struct CheckError: Error, CustomStringConvertible {
        let problem: String
        var description: String { problem }
    }

    /// Every problem with one line of output (parsed as JSON); none if it fits.
    func problems(line: Substring) -> [String] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) else {
            return ["not JSON: \(line)"]
        }
        return Self.problems(value, schema, at: "$")
    }

    /// A `harbor … --json` run's stdout to its end, each line checked
    /// against `command`'s schema (an issue recorded for each problem);
    /// the lines that parse as objects.
    static func objects(printedBy child: Child, command: String) throws -> [[String: Any]] {
        let schema = try JSONSchemaCheck(command: command)
        var objects: [[String: Any]] = []
        for line in child.allStdout().split(separator: "\n") {
            let problems = schema.problems(line: line)
            #expect(problems.isEmpty, "\(command): \(problems) in \(line)")
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { objects.append(object) }
        }
        return objects
    }

    private static let known: Set = ["$schema", "title", "description", "type", "enum", "required", "properties",
                                     "additionalProperties", "items"]

    /// The JSON type of a value JSONSerialization made: "integer" for a
    /// number without a fraction (which is a "number" too).
    static func type(of value: Any) -> String {
        if value is NSNull { return "null" }
        if value is String { return "string" }
        if value is [Any] { return "array" }
        if value is [String: Any] { return "object" }
        if let number = value as? NSNumber {
            if String(describing: Swift.type(of: number)).contains("Boolean") { return "boolean" }
            return String(cString: number.objCType) == "d" && number.doubleValue.rounded() != number.doubleValue ? "number" : "integer"
        }
        return "unknown"
    }

    private static func problems(_ value: Any, _ schema: [String: Any], at path: String) -> [String] {
        var found = schema.keys.filter { !known.contains($0) }.map { "\(path): schema keyword \($0) not checked" }
        if let types = schema["type"] {
            let allowed = (types as? [String]) ?? [(types as? String) ?? "?"]
            let actual = type(of: value)
            if !(allowed.contains(actual) || (actual == "integer" && allowed.contains("number"))) {
                found.append("\(path): \(actual), not \(allowed)")
                return found
            }
        }
        if let choices = schema["enum"] as? [Any],
           !choices.contains(where: { ($0 as? NSObject)?.isEqual(value) ?? false }) {
            found.append("\(path): \(value) not one of \(choices)")
        }
        if let object = value as? [String: Any] {
            for key in (schema["required"] as? [String]) ?? [] where object[key] == nil {
                found.append("\(path): no \(key)")
            }
            let properties = (schema["properties"] as? [String: Any]) ?? [:]
            for (key, member) in object {
                if let property = properties[key] as? [String: Any] {
                    found += problems(member, property, at: "\(path).\(key)")
                } else if schema["additionalProperties"] as? Bool == false {
                    found.append("\(path): \(key) is not in the schema")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, item) in array.enumerated() { found += problems(item, items, at: "\(path)[\(index)]") }
        }
        return found
    }
}
