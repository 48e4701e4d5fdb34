"""CSV price reports and their e-mail: DataFrames from the database (read only), files, SMTP.

``build.build_report`` reads the tables, ``build.write_report`` writes the dated CSV files,
``summary.summarise`` words the e-mail and ``mail.compose`` / ``mail.send`` deliver it. This package
never imports ``planner``: settings arrive as plain values.
"""
