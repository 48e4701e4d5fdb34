"""CSV price reports and their e-mail: DataFrames from the database (read only), files, SMTP.

``build.build_report`` reads the tables, ``build.write_report`` writes the dated CSV files,
``chart.write_chart`` draws the price chart beside them, ``summary.summarise`` words the e-mail and
``mail.compose`` / ``mail.send`` deliver it; ``files.written_whole`` writes a file whole or not at
all. This package never imports ``planner`` (``planner`` imports it): settings arrive as plain values.
"""
