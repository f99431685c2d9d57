// The GoogleDrive module; see Package.swift for what it owns.
