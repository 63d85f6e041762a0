/// swift-argument-parser's own usage messages in rawble's words: the value and what it was
/// for first, then why (`2A3 is not a target: neither a handle …`), not the parser's
/// `The value '2A3' is invalid for '<target>': …`, whose placeholders are its own notation.
enum UsageWording {
    static func reworded(_ message: String) -> String {
        if let match = message.wholeMatch(of: /The value '(.*)' is invalid for '([^']+)'(?:: (.*))?/) {
            let value = String(match.output.1), why = match.output.3.map(String.init)
            let name = String(match.output.2)
            if name.hasPrefix("-") {
                let option = name.split(separator: " ").first.map(String.init) ?? name
                return "\(option) \(value): " + (why ?? "not a value \(option) takes")
            }
            let thing = placeholder(name)
            return "\(value) is not \(article(thing)) \(thing)" + (why.map { ": \($0)" } ?? "")
        }
        if let match = message.wholeMatch(of: /Missing expected argument '([^']+)'/) {
            let thing = placeholder(String(match.output.1))
            return "no \(thing) given"
        }
        if let match = message.wholeMatch(of: /Missing value for '([^']+)'/) {
            let option = match.output.1.split(separator: " ").first.map(String.init) ?? String(match.output.1)
            return "\(option) needs a value"
        }
        return message
    }

    /// `<target>` as a word: `target`; `<address-or-name>`: `address or name`.
    static func placeholder(_ name: String) -> String {
        String(name.filter { !"<>.".contains($0) }.map { $0 == "-" ? " " : $0 })
    }

    static func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0.lowercased()) } == true ? "an" : "a"
    }
}
