"""The lab's Python side: the one CSV reader, the tables, the pictures and the runners behind the
make targets. Run its commands from the repository root:

    python -m transpose_lab.run_steps run-all|scaling|sweep|bench|dtypes ...
    python -m transpose_lab.ncu_profile --steps ... --csv results/profile.csv
    python -m transpose_lab.make_plots --results results
    python -m transpose_lab.texts [--check]      (the tables and figures in every *.md)
    python -m transpose_lab.plot_NAME --csv FILE --out FILE.png   (one picture)

Modules: results_csv (reading and selecting rows; standard library only), report_tables (text and
Markdown tables), plot_style and plot_* (matplotlib), run_steps, ncu_profile, make_plots,
texts.
"""
