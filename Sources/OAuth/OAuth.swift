// The OAuth module; see Package.swift for what it owns.
