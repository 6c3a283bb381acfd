pytest_plugins = ["stratus_fixture"]
