package schema

func acpSchema() (*Schema, error)        { return nil, errNotYet }
func extensionsSchema() (*Schema, error) { return nil, errNotYet }
