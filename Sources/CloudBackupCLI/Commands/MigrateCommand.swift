struct MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "(not written yet)"
    static let usage = "usage: cloudbackup migrate FILE"
    static let help = usage

    init(arguments: inout Arguments) throws(CLIError) {
        _ = try arguments.positionals()
    }

    func run(in context: Context) throws {
        throw CLIError("migrate is not written yet", exitCode: .failure)
    }
}
