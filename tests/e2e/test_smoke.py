def test_scan_next_submit_pass(project):
    project.source(
        "calc",
        """
        def double(x):
            return x * 2


        def sign(x):
            if x < 0:
                return -1
            return 1
        """,
    )
    project.test(
        "test_calc",
        """
        from pkg.calc import double

        def test_double():
            assert double(3) == 6
        """,
    )
    result, data = project.run_json("--quest", "scan")
    assert result.ret == 0
    assert data["counts"] == {"TODO": 1, "PASS": 1, "REVIEW": 0, "DONE": 0}
    result, data = project.run_json("--quest", "next")
    assert data["quest"]["id"] == "src/pkg/calc.py::sign"
    assert data["quest"]["missing_lines"] == [7, 8, 9]
    project.test(
        "test_sign",
        """
        from pkg.calc import sign

        def test_sign():
            assert sign(-5) == -1
            assert sign(5) == 1
        """,
    )
    result, data = project.run_json("--quest", "submit")
    assert data["verdict"] == "PASS", data
    assert result.ret == 0
    assert data["remaining"] == 0
    assert project.ratchet()["quests"]["src/pkg/calc.py::sign"]["state"] == "PASS"
