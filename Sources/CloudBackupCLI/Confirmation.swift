import Foundation
import LocalFiles

/// The `[y/N]` question `restore` and `rollback` ask before they write.
enum Confirmation {
    /// Where to put the question; nil when nobody is there to answer it (stdin is not a
    /// terminal). It goes to stderr when that is a terminal, else straight to the controlling
    /// terminal, so `2>log` does not skip the question a person would answer.
    static func asker(in context: Context) -> ((String) -> Void)? {
        guard context.stdinIsTerminal else { return nil }
        if context.stderrIsTerminal { return context.writeError }
        let terminal = open("/dev/tty", O_WRONLY | O_CLOEXEC)
        guard terminal >= 0 else { return nil }
        // Left open: it serves this one question, and the process ends soon after.
        return { _ = LocalFile.writeAll($0.utf8, to: terminal) }
    }

    /// Asks `question` and reads the answer from stdin: y or yes (any case) is a yes.
    static func ask(_ question: String, with ask: (String) -> Void) -> Bool {
        ask(question)
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return answer == "y" || answer == "yes"
    }
}
