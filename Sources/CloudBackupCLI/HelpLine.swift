/// One option as a command's help shows it: the name, its description from `column` (two
/// spaces after a name that reaches it), and further lines indented to `column`, so options
/// shared by several commands line up with each command's own.
enum HelpLine {
    static func option(_ name: String, column: Int, _ lines: String...) -> String {
        let first = "  " + name
        let head = first + String(repeating: " ", count: max(2, column - first.count))
        return head + lines.joined(separator: "\n" + String(repeating: " ", count: column))
    }
}
