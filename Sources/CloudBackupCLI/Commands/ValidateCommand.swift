struct ValidateCommand: Command {
    static let name = "validate"
    static let summary = "(not written yet)"
    static let usage = "usage: cloudbackup validate FILE"
    static let help = usage

    init(arguments: inout Arguments) throws(CLIError) {
        _ = try arguments.positionals()
    }

    func run(in context: Context) throws {
        throw CLIError("validate is not written yet", exitCode: .failure)
    }
}
