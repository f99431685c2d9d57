struct InspectCommand: Command {
    static let name = "inspect"
    static let summary = "(not written yet)"
    static let usage = "usage: cloudbackup inspect FILE"
    static let help = usage

    init(arguments: inout Arguments) throws(CLIError) {
        _ = try arguments.positionals()
    }

    func run(in context: Context) throws {
        throw CLIError("inspect is not written yet", exitCode: .failure)
    }
}
