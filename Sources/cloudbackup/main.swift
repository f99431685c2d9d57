import CloudBackupCLI

CloudBackup.exit(withArguments: Array(CommandLine.arguments.dropFirst()))
